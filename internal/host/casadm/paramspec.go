package casadm

// ParamSpec is one parameter as casadm names it: the -X option that sets it, the -G row
// title that shows it, and its value on a fresh cache (FORMATS.md §5).
type ParamSpec struct {
	Namespace, Flag, Title, Default string
}

// The parameters Prism sets, by namespace.
var (
	CleaningPolicy        = ParamSpec{"cleaning", "-p", "Cleaning policy type", "alru"}
	AlruWakeUp            = ParamSpec{"cleaning-alru", "-w", "Wake up time [s]", "20"}
	AlruStaleBuffer       = ParamSpec{"cleaning-alru", "-s", "Stale buffer time [s]", "120"}
	AlruFlushMaxBuffers   = ParamSpec{"cleaning-alru", "-b", "Flush max buffers", "100"}
	AlruActivityThreshold = ParamSpec{"cleaning-alru", "-t", "Activity threshold [ms]", "10000"}
	AcpWakeUp             = ParamSpec{"cleaning-acp", "-w", "Wake up time [ms]", "10"}
	AcpFlushMaxBuffers    = ParamSpec{"cleaning-acp", "-b", "Flush max buffers", "128"}
	PromotionPolicy       = ParamSpec{"promotion", "-p", "Promotion policy type", "always"}
	NhitThreshold         = ParamSpec{"promotion-nhit", "-t", "Insertion threshold", "3"}
	NhitTrigger           = ParamSpec{"promotion-nhit", "-o", "Policy trigger [%]", "80"}
	SeqCutoffThreshold    = ParamSpec{"seq-cutoff", "-t", "Sequential cutoff threshold [KiB]", "1024"}
	SeqCutoffPolicy       = ParamSpec{"seq-cutoff", "-p", "Sequential cutoff policy", "full"}
)

// CacheParamNamespaces are the cache-wide namespaces in the order to set them: a policy's
// type before its parameters.
var CacheParamNamespaces = []string{"cleaning", "cleaning-alru", "cleaning-acp", "promotion", "promotion-nhit"}
