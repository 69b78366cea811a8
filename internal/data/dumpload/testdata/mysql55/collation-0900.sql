-- expect: the utf8mb4_0900 collations, which MySQL 8.0.1 added
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `collation_0900`
--

DROP TABLE IF EXISTS `collation_0900`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `collation_0900` (
  `id` int NOT NULL,
  `name` varchar(20) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;

LOCK TABLES `collation_0900` WRITE;
INSERT INTO `collation_0900` VALUES (1,'x');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
