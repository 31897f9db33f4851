package wire

import (
	"mime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// The wire decodes whatever the lab's clients read, with apimachinery's own serializers:
// client-go's typed objects, the metadata client's PartialObjectMetadata(List) (meta.k8s.io/v1)
// and, as unstructured, the custom resources of the dynamic client; as JSON, protobuf or CBOR.
// Only what is built here is used: client-go's own scheme is left as the clients see it.
var (
	wireScheme = newWireScheme()
	codecs     = serializer.NewCodecFactory(wireScheme)

	// objects decodes one object: a LIST body, a watch event's object, an error's Status.
	objects runtime.Decoder = typedOrUnstructured{
		// The format is recognized from the data, not from the response's content type: a
		// CBOR watch event's object reaches the object decoder as JSON (apimachinery's CBOR
		// decoder transcodes RawExtensions to JSON by default, and always in v0.31).
		typed: recognizer.NewDecoder(cbor.NewSerializer(wireScheme, wireScheme), codecs.UniversalDeserializer()),
		unstructured: recognizer.NewDecoder(
			cbor.NewSerializer(unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper()),
			unstructured.UnstructuredJSONScheme),
	}

	// mediaTypes are the response content types the wire decodes, with their watch framing.
	// The CBOR entries are built here rather than with cbor.NewSerializerInfo or a
	// CodecFactory option: apimachinery v0.31 has neither.
	mediaTypes = append(codecs.SupportedMediaTypes(),
		cborInfo("cbor"),
		cborInfo("cbor-seq")) // what a watch answers: a CBOR sequence (RFC 8742), one item an event
)

// discoveryGroup is aggregated discovery's (APIGroupDiscoveryList): a list, which the
// unstructured decoder would decode, but no informer's LIST.
const discoveryGroup = "apidiscovery.k8s.io"

func newWireScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	// as client-go's scheme package registers itself: meta's unversioned types (WatchEvent,
	// Status) and every built-in group
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	// the metadata client's PartialObjectMetadata and PartialObjectMetadataList
	utilruntime.Must(metav1.AddMetaToScheme(s))
	return s
}

func cborInfo(subType string) runtime.SerializerInfo {
	s := cbor.NewSerializer(wireScheme, wireScheme)
	return runtime.SerializerInfo{
		MediaType:        "application/" + subType,
		MediaTypeType:    "application",
		MediaTypeSubType: subType,
		Serializer:       s,
		StreamSerializer: &runtime.StreamSerializerInfo{Serializer: s, Framer: cbor.NewFramer()},
	}
}

// serializerFor finds the serializer for a response content type, e.g. "application/json",
// "application/vnd.kubernetes.protobuf;stream=watch" or "application/cbor-seq"; its
// parameters (the metadata client's "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1") do not
// change the wire format.
func serializerFor(contentType string) (runtime.SerializerInfo, bool) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return runtime.SerializerInfo{}, false
	}
	return runtime.SerializerInfoForMediaType(mediaTypes, mediaType)
}

// typedOrUnstructured decodes with the typed scheme, and a kind it does not know (a custom
// resource) as unstructured.
type typedOrUnstructured struct{ typed, unstructured runtime.Decoder }

func (d typedOrUnstructured) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, actual, err := d.typed.Decode(data, gvk, into)
	if runtime.IsNotRegisteredError(err) {
		return d.unstructured.Decode(data, gvk, into)
	}
	return obj, actual, err
}
