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
-- Name: pgbench_branches; Type: TABLE; Schema: public; Owner: dbarena
--

CREATE TABLE public.pgbench_branches (
    bid integer NOT NULL,
    bbalance integer,
    filler character(88)
)
WITH (fillfactor='100');


ALTER TABLE public.pgbench_branches OWNER TO dbarena;

--
-- Name: pgbench_tellers; Type: TABLE; Schema: public; Owner: dbarena
--

CREATE TABLE public.pgbench_tellers (
    tid integer NOT NULL,
    bid integer,
    tbalance integer,
    filler character(84)
)
WITH (fillfactor='100');


ALTER TABLE public.pgbench_tellers OWNER TO dbarena;

--
-- Data for Name: pgbench_branches; Type: TABLE DATA; Schema: public; Owner: dbarena
--

COPY public.pgbench_branches (bid, bbalance, filler) FROM stdin;
1	-141293	\N
\.


--
-- Data for Name: pgbench_tellers; Type: TABLE DATA; Schema: public; Owner: dbarena
--

COPY public.pgbench_tellers (tid, bid, tbalance, filler) FROM stdin;
7	1	46918	\N
4	1	-22795	\N
1	1	55020	\N
6	1	-95414	\N
2	1	-924	\N
10	1	-77328	\N
5	1	-62291	\N
3	1	50308	\N
8	1	-32679	\N
9	1	-2108	\N
\.


--
-- Name: pgbench_branches pgbench_branches_pkey; Type: CONSTRAINT; Schema: public; Owner: dbarena
--

ALTER TABLE ONLY public.pgbench_branches
    ADD CONSTRAINT pgbench_branches_pkey PRIMARY KEY (bid);


--
-- Name: pgbench_tellers pgbench_tellers_pkey; Type: CONSTRAINT; Schema: public; Owner: dbarena
--

ALTER TABLE ONLY public.pgbench_tellers
    ADD CONSTRAINT pgbench_tellers_pkey PRIMARY KEY (tid);


--
-- PostgreSQL database dump complete
--

\unrestrict 2k8MqCONJPPedAwsA0vAHkySW79yO7hKsBdBmWNNAOLZILSdeD2ipIiPsaNZhDf

