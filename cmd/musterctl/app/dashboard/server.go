package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

//go:embed templates/*.html static/*
var assets embed.FS

// refreshEvery is how often an open page is re-sent without a change, so that relative
// times ("next in 40s") stay true.
const refreshEvery = 5 * time.Second

// syncTimeout bounds the wait for the first list of every kind: a hub without Muster's
// CRDs never syncs.
const syncTimeout = time.Minute

// Server serves the dashboard from an informer cache of the hub.
type Server struct {
	reader  client.Reader
	changes *changes
	page    *template.Template
}

// Serve serves the dashboard on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	handler := s.handler()
	if isLoopback(ln.Addr()) {
		handler = loopbackOnly(handler)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		// Open event streams never end by themselves: close them rather than wait.
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving the dashboard: %w", err)
	}
	return nil
}

// Start fills an informer cache of the hub at cfg with the four kinds the page shows, until
// ctx ends, and waits for its first lists, so that the first page is complete. A namespace
// limits the jobs and schedules to that namespace ("" shows every namespace); clusters are
// shown either way.
func Start(ctx context.Context, cfg *rest.Config, namespace string) (*Server, error) {
	opts := cache.Options{Scheme: scheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the hub cache: %w", err)
	}
	page, err := template.New("page").Funcs(funcs).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the dashboard's templates: %w", err)
	}
	s := &Server{reader: c, changes: newChanges(), page: page}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.changes.notify() },
		UpdateFunc: func(any, any) { s.changes.notify() },
		DeleteFunc: func(any) { s.changes.notify() },
	}
	for _, obj := range []client.Object{&musterv1.MemberCluster{}, &musterv1.FleetJob{}, &musterv1.BroadcastJob{}, &musterv1.FleetCronJob{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T on the hub: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("watching %T on the hub: %w", obj, err)
		}
	}
	// The cache runs until ctx ends, also when its lists do not finish in time: the
	// caller gives up on ctx then.
	go func() {
		if err := c.Start(ctx); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "hub cache stopped")
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, fmt.Errorf("listing Muster's kinds on the hub did not finish within %s: are Muster's CRDs installed and may you list them?", syncTimeout)
	}
	return s, nil
}

func (s *Server) handler() http.Handler {
	static, _ := fs.Sub(assets, "static")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /fleet.json", s.serveJSON)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return mux
}

// fleet reads the cache (never the API server) and assembles the view.
func (s *Server) fleet(ctx context.Context) (Fleet, error) {
	var (
		clusters musterv1.MemberClusterList
		fjs      musterv1.FleetJobList
		bcjs     musterv1.BroadcastJobList
		crons    musterv1.FleetCronJobList
	)
	for _, l := range []client.ObjectList{&clusters, &fjs, &bcjs, &crons} {
		if err := s.reader.List(ctx, l); err != nil {
			return Fleet{}, fmt.Errorf("reading the hub cache: %w", err)
		}
	}
	return assemble(hubObjects{Clusters: clusters.Items, FleetJobs: fjs.Items, BroadcastJobs: bcjs.Items, Crons: crons.Items}, time.Now()), nil
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	f, err := s.fleet(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := s.page.ExecuteTemplate(&buf, "page.html", f); err != nil {
		fail(w, r, fmt.Errorf("rendering the page: %w", err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A failed write means the browser went away: there is no one to tell.
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request) {
	f, err := s.fleet(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// The view always encodes; a failed write means the client went away.
	_ = json.NewEncoder(w).Encode(f)
}

// fail logs a request's failure and answers it with the error.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	logr.FromContextOrDiscard(r.Context()).Error(err, "serving the dashboard", "path", r.URL.Path)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// serveEvents streams the page's body, re-rendered, as a server-sent event "fleet" at once,
// after every change and every refreshEvery.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	changed, unsubscribe := s.changes.subscribe()
	defer unsubscribe()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for {
		if err := s.sendFleet(w, r.Context()); err != nil {
			if r.Context().Err() == nil {
				logr.FromContextOrDiscard(r.Context()).Error(err, "sending the fleet to a page")
			}
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

func (s *Server) sendFleet(w http.ResponseWriter, ctx context.Context) error {
	f, err := s.fleet(ctx)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if err := s.page.ExecuteTemplate(&body, "fleet.html", f); err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	_, err = w.Write(sseEvent("fleet", body.String()))
	return err
}

// sseEvent frames data as one server-sent event: a data line per line of it, which the
// browser joins again with newlines.
func sseEvent(name, data string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\n", name)
	// A carriage return ends a line in the event stream too.
	data = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
	for line := range strings.SplitSeq(data, "\n") {
		fmt.Fprintf(&b, "data: %s\n", line)
	}
	b.WriteString("\n")
	return b.Bytes()
}
