-- expect: FULLTEXT indexes on InnoDB tables, which MySQL 5.6.4 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `fulltext_innodb`
--

DROP TABLE IF EXISTS `fulltext_innodb`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `fulltext_innodb` (
  `id` int(11) NOT NULL,
  `body` text,
  PRIMARY KEY (`id`),
  FULLTEXT KEY `ft_body` (`body`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `fulltext_innodb` WRITE;
INSERT INTO `fulltext_innodb` VALUES (1,'one');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
