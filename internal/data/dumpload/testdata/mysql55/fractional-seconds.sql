-- expect: fractional seconds (DATETIME(n), TIMESTAMP(n), TIME(n)), which MySQL 5.6.4 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `fractional_seconds`
--

DROP TABLE IF EXISTS `fractional_seconds`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `fractional_seconds` (
  `id` int(11) NOT NULL,
  `at` datetime(6) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `fractional_seconds` WRITE;
INSERT INTO `fractional_seconds` VALUES (1,'2020-01-01 00:00:00.123456');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
