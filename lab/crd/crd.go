// Package crd is the lab's own custom resource, widgets.informer-lab.dev: what the dynamic-crd
// and cbor informer kinds watch, served by apiextensions-apiserver's own storage and watch cache
// rather than by a built-in type's.
package crd

import (
	"context"
	"fmt"
	"time"

	"informer-lab/record"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// GVR is the resource the informers watch and the writer writes.
var GVR = schema.GroupVersionResource{Group: record.CRDGroup, Version: record.CRDVersion, Resource: record.CRDResource}

// Widget is the definition: namespaced, one version, a structural schema whose spec.tick the
// writer sets as it sets a ConfigMap's data.tick.
func Widget() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: record.CRDResource + "." + record.CRDGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: record.CRDGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: record.CRDResource, Singular: "widget", Kind: record.CRDKind, ListKind: record.CRDKind + "List"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: record.CRDVersion, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"tick": str, "seed": str}},
					},
				}},
			}},
		},
	}
}

// Install creates the definition (an existing one is kept) and waits until the server serves
// it: Established, and a LIST of its resource answered.
func Install(ctx context.Context, cfg *rest.Config) error {
	cs, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("install %s: %w", Widget().Name, err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("install %s: %w", Widget().Name, err)
	}
	def := Widget()
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("install %s: %w", def.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				// Established first, then served: the first LIST of a new resource may still be
				// a 404.
				_, err := dc.Resource(GVR).List(ctx, metav1.ListOptions{Limit: 1})
				return err == nil, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("install %s: not served after 30s: %w", def.Name, err)
	}
	return nil
}
