-- expect: DEFAULT or ON UPDATE CURRENT_TIMESTAMP on DATETIME columns, which MySQL 5.6.5 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `datetime_default`
--

DROP TABLE IF EXISTS `datetime_default`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `datetime_default` (
  `id` int(11) NOT NULL,
  `created` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `datetime_default` WRITE;
INSERT INTO `datetime_default` VALUES (1,'2020-01-01 00:00:00');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
