// A fast S3-compatible server on loopback for the S3 benchmarks (bench/s3-read.bench.mjs, bench/s3-info.bench.mjs):
// gofakes3 (github.com/johannesboyne/gofakes3, MIT) over its in-memory backend. The tests use moto's server; moto
// reads the whole object for every range request, so on it a full read by ranges measures moto, not the reader.
// bench/lib/s3-server.mjs builds this with `go build` into bench/tmp/ when Go is on PATH.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	flag.Parse()
	faker := gofakes3.New(s3mem.New())
	log.Fatal(http.ListenAndServe(*addr, faker.Server()))
}
