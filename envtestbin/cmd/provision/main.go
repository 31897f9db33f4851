// Command provision builds (or finds) kube-apiserver and etcd for envtest
// and says where they are; with -kubectl, kubectl of the same version too, in
// the same directory (as in setup-envtest's downloads):
//
//	GOWORK=off go run ./cmd/provision -version 1.32.13
//	export KUBEBUILDER_ASSETS=$(GOWORK=off go run ./cmd/provision -print-dir)
//	KUBECTL=$(GOWORK=off go run ./cmd/provision -print-kubectl)
//
// -print-kubectl implies -kubectl and prints kubectl's path on stdout; with
// -print-dir as well, the directory comes first, one line each. -sample-apiservers provisions
// the aggregated apiservers instead (k8s.io/sample-apiserver, envtestbin.SampleAPIServers).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"informer-lab/envtestbin"
)

func main() {
	version := flag.String("version", envtestbin.DefaultVersion, "Kubernetes version X.Y.Z (\"upgrade\": "+envtestbin.UpgradeVersion+", the second server of make check's upgrade column)")
	etcdVersion := flag.String("etcd-version", "", "etcd version A.B.C (default: $ETCD_VERSION, else what k8s.io/kubernetes requires)")
	printDir := flag.Bool("print-dir", false, "print only the binaries' directory on stdout")
	noBuild := flag.Bool("no-build", false, "fail instead of building missing binaries")
	withKubectl := flag.Bool("kubectl", false, "also provision kubectl")
	printKubectl := flag.Bool("print-kubectl", false, "print kubectl's path on stdout (implies -kubectl)")
	samples := flag.Bool("sample-apiservers", false, "provision only the aggregated apiservers the project runs: k8s.io/sample-apiserver "+strings.Join(envtestbin.SampleAPIServers, " and "))
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "provision: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	// Ctrl-C cancels the build; Build removes its temp dirs on the way out. A second Ctrl-C
	// exits at once: once the first has come, the signals' default action is back. (This
	// module cannot use lab/lifecycle, which the lab module builds on top of it; a build starts
	// no process that outlives its go command.)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }()

	if *version == "upgrade" {
		*version = envtestbin.UpgradeVersion
	}
	opts := envtestbin.Options{
		Version:     *version,
		EtcdVersion: *etcdVersion,
		Progress:    os.Stderr,
		NoBuild:     *noBuild,
	}
	if *samples {
		for _, v := range envtestbin.SampleAPIServers {
			start := time.Now()
			bin, err := envtestbin.SampleAPIServer(ctx, opts, v)
			if err != nil {
				fail(stop, err)
			}
			fmt.Fprintf(os.Stderr, "sample-apiserver %s: %s (%s)\n", v, bin, took(time.Since(start)))
		}
		return
	}
	start := time.Now()
	dir, err := envtestbin.Lookup(ctx, opts)
	if err != nil {
		fail(stop, err)
	}
	fmt.Fprintf(os.Stderr, "envtest binaries for %s in %s (%s)\n", *version, dir, took(time.Since(start)))
	kubectl := ""
	if *withKubectl || *printKubectl {
		start := time.Now()
		if kubectl, err = envtestbin.Kubectl(ctx, opts); err != nil {
			fail(stop, err)
		}
		fmt.Fprintf(os.Stderr, "kubectl for %s: %s (%s)\n", *version, kubectl, took(time.Since(start)))
	}
	if *printDir {
		fmt.Println(dir)
	}
	if *printKubectl {
		fmt.Println(kubectl)
	}
}

// fail reports err and exits 1; stop first, since os.Exit skips deferred calls.
func fail(stop func(), err error) {
	fmt.Fprintf(os.Stderr, "provision: %v\n", err)
	stop()
	os.Exit(1)
}

// took rounds a duration for humans: a store hit takes microseconds, a build minutes.
func took(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Millisecond)
}
