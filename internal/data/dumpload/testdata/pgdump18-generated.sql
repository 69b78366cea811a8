--
-- PostgreSQL database dump
--

\restrict 2k8MqCONJPPedAwsA0vAHkySW79yO7hKsBdBmWNNAOLZILSdeD2ipIiPsaNZhDf

-- Dumped from database version 18.4
-- Dumped by pg_dump version 18.6

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: orders; Type: TABLE; Schema: public; Owner: dbarena
--

CREATE TABLE public.orders (
    id integer NOT NULL,
    qty integer,
    total integer GENERATED ALWAYS AS ((qty * 2)) STORED
);


ALTER TABLE public.orders OWNER TO dbarena;

--
-- Data for Name: orders; Type: TABLE DATA; Schema: public; Owner: dbarena
--

COPY public.orders (id, qty) FROM stdin;
1	5
2	7
\.


--
-- PostgreSQL database dump complete
--

\unrestrict 2k8MqCONJPPedAwsA0vAHkySW79yO7hKsBdBmWNNAOLZILSdeD2ipIiPsaNZhDf

