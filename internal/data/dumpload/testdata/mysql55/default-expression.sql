-- expect: expressions as column defaults (DEFAULT (expr)), which MySQL 8.0.13 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `default_expression`
--

DROP TABLE IF EXISTS `default_expression`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `default_expression` (
  `id` int NOT NULL,
  `n` int DEFAULT (1 + 1),
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `default_expression` WRITE;
INSERT INTO `default_expression` VALUES (1,2);
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
