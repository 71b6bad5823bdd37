package v1alpha1

// MaxMessageLength is the API's limit on a status message (the +kubebuilder MaxLength of every
// status message field).
const MaxMessageLength = 1024

// TruncateMessage keeps a message within MaxMessageLength (Truncate).
func TruncateMessage(s string) string { return Truncate(s, MaxMessageLength) }

// Truncate keeps s within limit bytes, cutting on a UTF-8 boundary and ending with "..." when
// it cuts, so that a long message from a host tool never makes the API server refuse a status
// or an event. limit must be more than 3.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "..."
	cut := limit - len(ellipsis)
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + ellipsis
}
