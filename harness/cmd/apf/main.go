// Command apf is make apf: what API Priority and Fairness charges informers that start at once,
// LIST→WATCH against streaming lists, per kube-apiserver version (see docs/apf.md).
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/apf"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return apf.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
