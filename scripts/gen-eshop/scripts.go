package main

// productPage is a product page's statements (after \set pid): the product
// joined to its ten lookups, then its images, attributes, stock and prices.
const productPage = `SELECT p.id, p.sku, p.name, p.price, p.old_price, p.description, p.rating, p.reviews,
       c.name AS category, pc.name AS parent_category, b.name AS brand, b.country,
       s.name AS supplier, t.rate AS tax_rate, cur.code AS currency, cur.rate AS currency_rate,
       u.name AS unit, col.name AS collection, pr.name AS promo, pr.discount_pct, w.city AS ships_from
  FROM product p
  JOIN category c ON c.id = p.category_id
  LEFT JOIN category pc ON pc.id = c.parent_id
  JOIN brand b ON b.id = p.brand_id
  JOIN supplier s ON s.id = p.supplier_id
  JOIN tax t ON t.id = p.tax_id
  JOIN currency cur ON cur.id = p.currency_id
  JOIN unit u ON u.id = p.unit_id
  LEFT JOIN collection col ON col.id = p.collection_id
  LEFT JOIN promo pr ON pr.id = p.promo_id AND pr.is_active
  JOIN warehouse w ON w.id = p.warehouse_id
 WHERE p.id = :pid;
SELECT url, alt, width, height FROM product_image WHERE product_id = :pid ORDER BY sort_order;
SELECT name, value FROM product_attribute WHERE product_id = :pid ORDER BY name;
SELECT w.name, w.city, st.qty - st.reserved AS available
  FROM stock st JOIN warehouse w ON w.id = st.warehouse_id
 WHERE st.product_id = :pid ORDER BY w.id;
SELECT cur.code, cur.symbol, pp.price
  FROM product_price pp JOIN currency cur ON cur.id = pp.currency_id
 WHERE pp.product_id = :pid ORDER BY cur.code;
`

// categoryPage is a category listing's statements (after \set cid): a page
// of 24 active products by price with brand and first image, and the count.
const categoryPage = `SELECT p.id, p.name, p.slug, p.price, p.old_price, p.rating, b.name AS brand, i.url AS image
  FROM product p
  JOIN brand b ON b.id = p.brand_id
  LEFT JOIN product_image i ON i.product_id = p.id AND i.sort_order = 1
 WHERE p.category_id = :cid AND p.is_active
 ORDER BY p.price
 LIMIT 24;
SELECT count(*) FROM product WHERE category_id = :cid AND is_active;
`

// The scripts take the shop's size from --define products=N (the
// --products of the dump), so one copy serves every size.

func productPageScript() string {
	return `-- dbarena gen-eshop: one product page view (pgbench script language; read only).
-- dbarena run script --file product_page.sql --define products=N (N: gen-eshop --products)
\set pid random(1, :products)
` + productPage
}

func shopScript() string {
	return `-- dbarena gen-eshop: a shop visitor's page view (pgbench script language), as
-- document 000's site: 98% reads, 2% writes. 70% product pages, 28% category
-- pages, 2% view-counter updates.
-- dbarena run script --file shop.sql --define products=N (N: gen-eshop --products)
\set r random(1, 100)
\set pid random(1, :products)
\set cid random(1, greatest(20, :products / 200))
\if :r <= 70
` + productPage + `\elif :r <= 98
` + categoryPage + `\else
UPDATE product SET views = views + 1 WHERE id = :pid;
\endif
`
}
