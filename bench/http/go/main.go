// Command cell-http-go is an HTTP/1.1 server on net/http, used as a cell
// benchmark target.
//
// Usage: cell-http-go PORT
//
// It serves the five workloads of bench/http/README.md: GET / (plain text),
// GET /json (a serialised message), GET /users/{id} (a uint64 echoed),
// POST /users (a JSON body bound to a typed record and echoed) and
// POST /minimal/users/{id} (both: the id merged into the bound record).
// Unknown paths are 404, a wrong method on a known path is 405 with Allow. It
// binds 127.0.0.1 only, keeps connections alive, logs nothing per request and
// exits 0 on SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxBody bounds a POST /users (or /minimal/users/{id}) body; a larger one is
// refused with 413.
const maxBody = 64 << 10

var (
	hello       = []byte("hello, world\n")
	notFound    = []byte("not found\n")
	notAllowed  = []byte("method not allowed\n")
	badRequest  = []byte("bad request\n")
	tooLarge    = []byte("payload too large\n")
	unsupported = []byte("unsupported media type\n")
)

type message struct {
	Message string `json:"message"`
}

type id struct {
	ID uint64 `json:"id"`
}

// user is the post-json record.
type user struct {
	Name  string `json:"name"`
	Age   uint64 `json:"age"`
	Adult bool   `json:"adult"`
}

// minimalUser is the minimal workload's reply: the routed id merged into the
// bound record (the embedded struct's fields are promoted into the object).
type minimalUser struct {
	ID uint64 `json:"id"`
	user
}

// userIn is what the body is decoded into: pointers, so that a missing (or
// null) field is an error rather than a zero value.
type userIn struct {
	Name  *string `json:"name"`
	Age   *uint64 `json:"age"`
	Adult *bool   `json:"adult"`
}

func reply(w http.ResponseWriter, status int, ctype string, body []byte) {
	h := w.Header()
	// Set explicitly so net/http does not sniff and append "; charset=utf-8".
	h["Content-Type"] = []string{ctype}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func text(w http.ResponseWriter, status int, body []byte) {
	reply(w, status, "text/plain", body)
}

// replyJSON serialises v at request time.
func replyJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		text(w, http.StatusInternalServerError, []byte("internal error\n"))
		return
	}
	reply(w, http.StatusOK, "application/json", body)
}

// readUser binds the body of POST /users (and /minimal/users/{id}); it
// returns the status to answer with when the body does not bind.
func readUser(w http.ResponseWriter, r *http.Request) (user, int) {
	if r.ContentLength > maxBody {
		return user{}, http.StatusRequestEntityTooLarge
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return user{}, http.StatusUnsupportedMediaType
	}
	// MaxBytesReader also catches a chunked body that runs past the bound.
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return user{}, http.StatusRequestEntityTooLarge
		}
		return user{}, http.StatusBadRequest
	}
	// encoding/json would turn invalid UTF-8 into U+FFFD; JSON text must be UTF-8.
	var in userIn
	if !utf8.Valid(data) || json.Unmarshal(data, &in) != nil || in.Name == nil || in.Age == nil || in.Adult == nil {
		return user{}, http.StatusBadRequest
	}
	return user{Name: *in.Name, Age: *in.Age, Adult: *in.Adult}, http.StatusOK
}

// bindUser binds the body, or answers the error itself and returns false.
func bindUser(w http.ResponseWriter, r *http.Request) (user, bool) {
	u, status := readUser(w, r)
	switch status {
	case http.StatusOK:
		return u, true
	case http.StatusRequestEntityTooLarge:
		// The rest of the body is not read: the connection cannot be reused.
		w.Header()["Connection"] = []string{"close"}
		text(w, status, tooLarge)
	case http.StatusUnsupportedMediaType:
		text(w, status, unsupported)
	default:
		text(w, status, badRequest)
	}
	return user{}, false
}

func postUser(w http.ResponseWriter, r *http.Request) {
	if u, ok := bindUser(w, r); ok {
		replyJSON(w, u)
	}
}

// postMinimal is POST /minimal/users/{id}: the body bound as POST /users
// binds it, with the routed id merged in.
func postMinimal(w http.ResponseWriter, r *http.Request, id uint64) {
	if u, ok := bindUser(w, r); ok {
		replyJSON(w, minimalUser{ID: id, user: u})
	}
}

// method answers 405 with Allow unless r uses the one method the path takes.
func method(w http.ResponseWriter, r *http.Request, allow string) bool {
	if r.Method == allow {
		return true
	}
	w.Header()["Allow"] = []string{allow}
	text(w, http.StatusMethodNotAllowed, notAllowed)
	return false
}

func handler(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/":
		if method(w, r, http.MethodGet) {
			text(w, http.StatusOK, hello)
		}
	case path == "/json":
		if method(w, r, http.MethodGet) {
			replyJSON(w, message{Message: "Hello, World!"})
		}
	case path == "/users":
		if method(w, r, http.MethodPost) {
			postUser(w, r)
		}
	case strings.HasPrefix(path, "/users/"):
		// Digits only, fitting a uint64: /users/abc, /users/ and /users/42/x
		// are unknown paths.
		n, err := strconv.ParseUint(path[len("/users/"):], 10, 64)
		if err != nil {
			text(w, http.StatusNotFound, notFound)
		} else if method(w, r, http.MethodGet) {
			replyJSON(w, id{ID: n})
		}
	case strings.HasPrefix(path, "/minimal/users/"):
		// The id as /users/{id} takes it. A bad id is an unknown path;
		// net/http discards the unread body after the handler returns.
		n, err := strconv.ParseUint(path[len("/minimal/users/"):], 10, 64)
		if err != nil {
			text(w, http.StatusNotFound, notFound)
		} else if method(w, r, http.MethodPost) {
			postMinimal(w, r, n)
		}
	default:
		text(w, http.StatusNotFound, notFound)
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
