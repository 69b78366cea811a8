-- expect: more than one TIMESTAMP column with CURRENT_TIMESTAMP, which MySQL 5.6.5 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `two_timestamps`
--

DROP TABLE IF EXISTS `two_timestamps`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `two_timestamps` (
  `id` int(11) NOT NULL,
  `created` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  `updated` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `two_timestamps` WRITE;
INSERT INTO `two_timestamps` VALUES (1,'2020-01-01 00:00:00','2020-01-01 00:00:00');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
