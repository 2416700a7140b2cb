// Command cell-http-go is a hello-world HTTP/1.1 server on net/http, used as a
// cell benchmark target.
//
// Usage: cell-http-go PORT
//
// GET / answers 200 with Content-Type: text/plain and body "hello, world\n";
// any other path is 404, any other method on / is 405. It binds 127.0.0.1
// only, keeps connections alive, logs nothing per request and exits 0 on
// SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

var (
	hello      = []byte("hello, world\n")
	notFound   = []byte("not found\n")
	notAllowed = []byte("method not allowed\n")
)

func reply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// Set explicitly so net/http does not sniff and append "; charset=utf-8".
	h["Content-Type"] = []string{"text/plain"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func handler(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != "/":
		reply(w, http.StatusNotFound, notFound)
	case r.Method != http.MethodGet:
		w.Header()["Allow"] = []string{"GET"}
		reply(w, http.StatusMethodNotAllowed, notAllowed)
	default:
		reply(w, http.StatusOK, hello)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cell-http-go PORT")
	os.Exit(2)
}

// listen binds 127.0.0.1:port with SO_REUSEADDR (Go sets it on listeners by
// default on Linux; the Control hook makes it explicit).
func listen(port int) (net.Listener, error) {
	lc := net.ListenConfig{
		Control: func(network, address string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	return lc.Listen(context.Background(), "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

func main() {
	if len(os.Args) != 2 {
		usage()
	}
	port, err := strconv.Atoi(os.Args[1])
	if err != nil || port < 1 || port > 65535 {
		fmt.Fprintf(os.Stderr, "cell-http-go: invalid port %q\n", os.Args[1])
		usage()
	}

	ln, err := listen(port)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cell-http-go: %v\n", err)
		os.Exit(1)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(handler),
	}

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		<-term
		// Close drops idle keep-alive connections at once instead of waiting
		// for load generators to hang up.
		_ = srv.Close()
		close(done)
	}()

	fmt.Fprintf(os.Stderr, "listening on 127.0.0.1:%d\n", port)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "cell-http-go: %v\n", err)
		os.Exit(1)
	}
	<-done
}
