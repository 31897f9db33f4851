package apf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
)

// DefaultServers: the last server before the object-size estimate's gate existed (1.32), the
// first with it (1.34), the newest (1.37), and the newest with the gate off: the estimate by
// count again, on the same server.
const DefaultServers = "1.32.13,1.34.4,1.37.2,1.37.2:SizeBasedListCostEstimate=false"

// Run is make apf's main: it returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, docs, root, out, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[apf] "+format+"\n", a...) }
	runDir, err := run(ctx, o, docs, root, out, args, stdout, say)
	if runDir != "" {
		fmt.Fprintf(stderr, "run directory: %s\n", runDir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		if errors.Is(err, servers.ErrUsage) || cli.IsUsage(err) {
			return cli.ExitUsage
		}
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (o Options, docs bool, root, out string, err error) {
	f := cli.NewFlags("apf", "client-v035", stderr)
	list := f.String("servers", DefaultServers, "kube-apiserver versions, comma-separated, each optionally with :Gate=bool settings")
	f.IntVar(&o.Objects, "objects", 1000, "ConfigMaps seeded into the watched namespace (APF charges a LIST one seat per 100)")
	f.IntVar(&o.Informers, "informers", 20, "K: informers one lab starts at once (1 to 26)")
	shares := f.String("shares", "30,1", "the lab user's priority level's nominalConcurrencyShares, comma-separated, each measured in turn (30: 66 seats of a default kube-apiserver's 600, enough for APF's largest charge of 10 seats; 1: 3 seats, where every request costs 1)")
	queue := f.Int("queue-length", 2, "its queueLengthLimit (one queue): a request that finds it full is rejected with 429")
	f.DurationVar(&o.PollPeriod, "poll-period", time.Second, "kube-apiserver's --etcd-count-metric-poll-period: how soon APF learns how many objects there are (its default: 1m)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 2*time.Minute, "how long one lab's informers get to sync")
	f.BoolVar(&docs, "docs", false, "also write docs/apf.md")
	if err = f.Parse(args); err != nil {
		return
	}
	switch {
	case o.Objects < 0:
		err = fmt.Errorf("-objects %d: want 0 or more", o.Objects)
	case o.Informers < 1 || o.Informers > 26:
		err = fmt.Errorf("-informers %d: want 1 to 26 (informers are named A to Z)", o.Informers)
	case *queue < 1 || *queue > 1000:
		err = fmt.Errorf("-queue-length %d: want 1 to 1000", *queue)
	case o.PollPeriod <= 0:
		err = fmt.Errorf("-poll-period %s: want a positive duration, e.g. 1s", o.PollPeriod)
	case o.SyncTimeout <= 0:
		err = fmt.Errorf("-sync-timeout %s: want a positive duration, e.g. 2m", o.SyncTimeout)
	}
	if err != nil {
		return
	}
	o.QueueLength = int32(*queue)
	for _, v := range strings.Split(*shares, ",") {
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		if perr != nil || n < 1 || n > 1000 {
			err = fmt.Errorf("-shares %q: want whole numbers from 1 to 1000, comma-separated, e.g. 30,1", *shares)
			return
		}
		o.Shares = append(o.Shares, int32(n))
	}
	if o.Servers, err = servers.ParseList(*list); err != nil {
		err = fmt.Errorf("-servers: %w", err)
		return
	}
	root, out, err = f.Dirs()
	return
}

func run(ctx context.Context, o Options, docs bool, root, out string, args []string, stdout io.Writer, say func(string, ...any)) (string, error) {
	if err := servers.Provision(ctx, o.Servers, say, cli.Lines(say)); err != nil {
		return "", err
	}
	started := time.Now()
	runDir, err := rundir.New(out, "apf-", started)
	if err != nil {
		return "", err
	}
	results, err := Measure(ctx, o, root, runDir, say)
	if err != nil {
		return runDir, err
	}
	page := Render(o, results, Header{Args: args, Started: started, Took: time.Since(started),
		Machine: fmt.Sprintf("%s on %s/%s, %d cores", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())})
	fmt.Fprint(stdout, page)
	if err := os.WriteFile(filepath.Join(runDir, "apf.md"), []byte(page), 0o644); err != nil {
		return runDir, err
	}
	if docs {
		if err := os.WriteFile(filepath.Join(root, "docs", "apf.md"), []byte(page), 0o644); err != nil {
			return runDir, err
		}
		say("wrote docs/apf.md")
	}
	return runDir, nil
}

// quoted is args as one shell word list, for the page's header.
func quoted(args []string) string {
	if len(args) == 0 {
		return "make apf"
	}
	return `make apf ARGS="` + strings.Join(args, " ") + `"`
}
