-- expect: the UUID, INET6 and INET4 column types, which only MariaDB has (from 10.7.1)
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;

--
-- Table structure for table `uuid_mariadb`
--

DROP TABLE IF EXISTS `uuid_mariadb`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `uuid_mariadb` (
  `id` int(11) NOT NULL,
  `u` uuid DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

LOCK TABLES `uuid_mariadb` WRITE;
INSERT INTO `uuid_mariadb` VALUES (1,'123e4567-e89b-12d3-a456-426655440000');
UNLOCK TABLES;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
