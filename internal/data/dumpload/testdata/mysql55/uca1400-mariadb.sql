-- expect: the UCA 14.0 (uca1400) collations, which only MariaDB has (from 10.10.1)
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `uca1400_mariadb`
--

DROP TABLE IF EXISTS `uca1400_mariadb`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `uca1400_mariadb` (
  `id` int(11) NOT NULL,
  `name` varchar(20) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_uca1400_ai_ci;

LOCK TABLES `uca1400_mariadb` WRITE;
INSERT INTO `uca1400_mariadb` VALUES (1,'x');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
