-- A mysqldump-style dump that MySQL 5.5 loads whole: what is newer
-- stays in version comments the way Sakila writes it, the rest is 5.5's.
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;

CREATE DATABASE /*!32312 IF NOT EXISTS*/ `l55_ok` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;
USE `l55_ok`;

DROP TABLE IF EXISTS `customer`;
CREATE TABLE `customer` (
  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `name` varchar(45) CHARACTER SET utf8mb4 NOT NULL,
  `balance` decimal(12,2) NOT NULL DEFAULT '0.00',
  `born` date DEFAULT NULL,
  `seen` datetime DEFAULT NULL,
  `photo` blob,
  `last_update` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  KEY `idx_name` (`name`)
) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4;

LOCK TABLES `customer` WRITE;
INSERT INTO `customer` VALUES (1,'Ann','10.50','1980-02-29','2020-01-01 10:00:00',0x00FF27,'2021-03-04 05:06:07'),(2,'Bjørn 😀','-3.25',NULL,NULL,NULL,'2021-03-04 05:06:07'),(3,'quote '' backslash \\ semi ;','0.00','2000-01-01','1999-12-31 23:59:59','','2021-03-04 05:06:07'),(4,'ünïcödé','99999.99',NULL,NULL,NULL,'2021-03-04 05:06:07');
UNLOCK TABLES;

DROP TABLE IF EXISTS `address`;
CREATE TABLE `address` (
  `id` int(11) NOT NULL,
  `line` varchar(50) NOT NULL,
  /*!50705 location GEOMETRY NOT NULL,*/
  PRIMARY KEY (`id`)
  /*!50705 ,SPATIAL KEY `idx_location` (location)*/
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO `address` VALUES (1,'1 Main St'),(2,'2 Side Rd');

DROP TABLE IF EXISTS `note`;
CREATE TABLE `note` (
  `id` int(11) NOT NULL,
  `title` varchar(100) NOT NULL,
  `body` text,
  PRIMARY KEY (`id`),
  FULLTEXT KEY `ft_note` (`title`,`body`)
) ENGINE=MyISAM DEFAULT CHARSET=utf8mb4;

INSERT INTO `note` VALUES (1,'first','multi\nline'),(2,'second',NULL);

DROP TABLE IF EXISTS `audit`;
CREATE TABLE `audit` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `customer_id` int(10) unsigned NOT NULL,
  `what` varchar(20) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO `audit` VALUES (1,1,'created'),(2,2,'created');

DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `customer_ai` AFTER INSERT ON `customer` FOR EACH ROW INSERT INTO audit (customer_id, what) VALUES (NEW.id, 'created') */;;
DELIMITER ;

/*!50001 DROP VIEW IF EXISTS `rich`*/;
/*!50001 CREATE ALGORITHM=UNDEFINED */
/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */
/*!50001 VIEW `rich` AS select `customer`.`id` AS `id`,`customer`.`name` AS `name` from `customer` where (`customer`.`balance` > 5) */;

DELIMITER ;;
CREATE DEFINER=`root`@`localhost` PROCEDURE `count_customers`(OUT n INT)
BEGIN
  SELECT COUNT(*) INTO n FROM customer;
END ;;
DELIMITER ;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
