package optouts

// intro says how the page was made and what each switch is (lab/optout's modes).
const intro = "Made by `make opt-outs`: one envtest kube-apiserver, every lab module attached to it and run once per switch below, " +
	"a module's runs at once; each lab starts informers A and B and, once both synced, makes one typed `List()` of ConfigMaps " +
	"outside its informers. One run by hand: `go run ./client-v0XX -kubeconfig PATH -direct-list -opt-out MODE -opt-out-at AT`.\n\n" +
	"The switches (`-opt-out`), each at `@start` (before any informer exists) or `@between` (once informer A synced, before B starts):\n\n" +
	"- `env`: `KUBE_FEATURE_WatchListClient=false` set in the process's environment.\n" +
	"- `code`: `features.ReplaceFeatureGates` from the program, with a gate that says `WatchListClient` is off.\n" +
	"- `flag`: a Kubernetes component's `--feature-gates=WatchListClient=false`: a component-base FeatureGate with client-go's " +
	"features added, parsed from the flag and handed to client-go with `features.ReplaceFeatureGates`.\n" +
	"- `flag-unwired`: the same flag in a program whose component-base gate is never handed to client-go.\n" +
	"- `listwatch`: informers over a `cache.ListWatch` that says `IsWatchListSemanticsUnSupported()`.\n" +
	"- `client`: the typed informer factory over a clientset that says `IsWatchListSemanticsUnSupported()`, as client-go's fake clientset does.\n\n" +
	"Every run but `env@start` starts from streaming on, so that a switch that works shows on every version: " +
	"`KUBE_FEATURE_WatchListClient=true` in the environment (`code@start`, `flag@start`, `env@between`), " +
	"or the program's own `-watch-list on` (the others). `env@start` runs with the lab module's own gate " +
	"(client-go's default; client-v032 sets it on in code).\n\n"

// sources are the client-go lines that decide what the table shows.
const sources = `
## Why, from the source

- The variable is read once, on the first question to client-go's gates; set later, it changes nothing
  (k8s.io/client-go@v0.35.10 features/envvar.go: "This is the only time a known feature can be set to a value"),
  and a value the program sets in code wins over it
  (k8s.io/client-go@v0.31.14 features/envvar.go: "precedence over features stored in enabledViaEnvVar").
- A reflector reads the gate once, when it is built, so informers already running keep their mode
  (k8s.io/client-go@v0.31.14 tools/cache/reflector.go: "r.UseWatchList = ptr.To(clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient))"),
  (k8s.io/client-go@v0.34.13 tools/cache/reflector.go: "r.useWatchList = clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)").
  Replacing the gates once they were used is allowed, with a warning
  (k8s.io/client-go@v0.35.10 features/features.go: "the default feature gates implementation has already been used and now it's being overwritten").
- Only from v0.35 does a reflector ask its ListerWatcher whether it can stream
  (k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "if r.useWatchList && watchlist.DoesClientNotSupportWatchListSemantics(lw) {"):
  ` + "`listwatch` and `client`" + ` do nothing before it.
- The typed ` + "`List()`" + ` of v0.31 to v0.33 reads the gate on every call and then tries to stream
  (k8s.io/client-go@v0.33.13 gentype/type.go: "watchlist.PrepareWatchListOptionsFromListOptions(opts)");
  from v0.34 it lists.
- A component-base gate reaches client-go only when the program hands it over with ` + "`features.ReplaceFeatureGates`" + `:
  ` + "`flag`" + ` does and ` + "`flag-unwired`" + ` does not, which is all that differs between their columns above.
`
