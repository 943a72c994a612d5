package schema

import "testing"

// TestNormaliseKeepsOnlyTheSchema: two dumps of one schema by different
// pg_dump builds differ in their banner, versions, settings and \restrict
// key; normalised, they are one text.
func TestNormaliseKeepsOnlyTheSchema(t *testing.T) {
	a := "--\n-- PostgreSQL database dump\n--\n\n\\restrict abc123\n\n-- Dumped from database version 15.14\n-- Dumped by pg_dump version 15.14\n\nSET statement_timeout = 0;\nSELECT pg_catalog.set_config('search_path', '', false);\n\n--\n-- Name: t; Type: TABLE; Schema: public; Owner: -\n--\n\nCREATE TABLE public.t (\n    id bigint NOT NULL\n);\n\n\n--\n-- PostgreSQL database dump complete\n--\n\n\\unrestrict abc123\n\n"
	b := "--\n-- PostgreSQL database dump\n--\n\n\\restrict zzz999\n\n-- Dumped from database version 15.15\n-- Dumped by pg_dump version 15.15\n\nSET lock_timeout = 0;\n\n--\n-- Name: t; Type: TABLE; Schema: public; Owner: -\n--\n\nCREATE TABLE public.t (\n    id bigint NOT NULL\n);\n\n\\unrestrict zzz999\n"
	want := "-- Name: t; Type: TABLE; Schema: public\n\nCREATE TABLE public.t (\n    id bigint NOT NULL\n);\n"
	if got := Normalise(a); got != want {
		t.Fatalf("Normalise(a) = %q, want %q", got, want)
	}
	if got := Normalise(b); got != want {
		t.Fatalf("Normalise(b) = %q, want %q", got, want)
	}
}
