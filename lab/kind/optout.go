package kind

import (
	"context"

	"informer-lab/lab/optout"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// optedOut is the ConfigMap informer of -opt-out listwatch (lab/optout): over a cache.ListWatch
// that passes every option on (cache.NewListWatchFromClient, unlike the custom-listwatch kind's)
// and says it does not support watch-list semantics. nil, nil for any other o.OptOut.
func optedOut(cfg *rest.Config, o Options) (Informer, error) {
	if o.OptOut != optout.ListWatch {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", o.Namespace, fields.Everything())
	inf := cache.NewSharedIndexInformer(noWatchList{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	return handled(&running{run: func(ctx context.Context) { inf.Run(ctx.Done()) }, synced: inf.HasSynced, list: storeItems(inf)}, inf, o)
}

// noWatchListClient is a clientset that tells the informers built over it that it does not
// support watch-list semantics: client-go v0.35+'s typed informers wrap their ListWatch with
// cache.ToListWatcherWithWatchListSemantics(lw, client), which asks the client.
type noWatchListClient struct{ kubernetes.Interface }

func (noWatchListClient) IsWatchListSemanticsUnSupported() bool { return true }

// clientFor is the clientset the typed factory is built over: cs, or cs saying it does not
// support watch-list semantics (-opt-out client).
func clientFor(cs kubernetes.Interface, o Options) kubernetes.Interface {
	if o.OptOut == optout.Client {
		return noWatchListClient{cs}
	}
	return cs
}
