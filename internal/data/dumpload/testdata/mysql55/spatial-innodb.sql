-- expect: SPATIAL indexes on InnoDB tables, which MySQL 5.7.5 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `spatial_innodb`
--

DROP TABLE IF EXISTS `spatial_innodb`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `spatial_innodb` (
  `id` int(11) NOT NULL,
  `pos` point NOT NULL,
  PRIMARY KEY (`id`),
  SPATIAL KEY `sp_pos` (`pos`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `spatial_innodb` WRITE;
INSERT INTO `spatial_innodb` VALUES (1,POINT(1,2));
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
