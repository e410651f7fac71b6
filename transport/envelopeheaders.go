package transport

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// The credential headers the envelope reads, named without their prefix.
const (
	hdrApplicationID = iota
	hdrMasterKey
	hdrClientKey
	hdrJavaScriptKey
	hdrRESTAPIKey
	hdrWindowsKey
	hdrSessionToken
	hdrInstallationID
	hdrCloudContext
	numEnvelopeHeaders
)

var envelopeHeaderNames = [numEnvelopeHeaders][]byte{
	[]byte("Application-Id"), []byte("Master-Key"), []byte("Client-Key"), []byte("Javascript-Key"),
	[]byte("REST-API-Key"), []byte("Windows-Key"), []byte("Session-Token"), []byte("Installation-Id"),
	[]byte("Cloud-Context"),
}

var (
	prefixParse = []byte("X-Parse-")
	prefixSvc   = []byte("X-Svc-")
)

// envelopeHeaders are the credential headers of one request, read in one
// pass over its headers instead of two lookups (X-Parse-, then X-Svc-)
// per name. Values stay valid while the request is served.
type envelopeHeaders struct {
	parse, svc         [numEnvelopeHeaders][]byte
	seenParse, seenSvc uint16 // which names were met, so the first one counts
}

// readEnvelopeHeaders collects h's credential headers. Like Peek, the
// first header of a name counts.
func readEnvelopeHeaders(h *fasthttp.RequestHeader) (e envelopeHeaders) {
	h.VisitAll(func(k, v []byte) {
		vals, seen := &e.parse, &e.seenParse
		switch {
		case len(k) > len(prefixParse) && bytes.EqualFold(k[:len(prefixParse)], prefixParse):
			k = k[len(prefixParse):]
		case len(k) > len(prefixSvc) && bytes.EqualFold(k[:len(prefixSvc)], prefixSvc):
			k, vals, seen = k[len(prefixSvc):], &e.svc, &e.seenSvc
		default:
			return
		}
		for i, name := range envelopeHeaderNames {
			if *seen&(1<<i) == 0 && bytes.EqualFold(k, name) {
				*seen |= 1 << i
				vals[i] = v
				return
			}
		}
	})
	return e
}

// get is header's answer for name i: X-Parse-<name> when it is not
// empty, else X-Svc-<name>.
func (e *envelopeHeaders) get(i int) []byte {
	if len(e.parse[i]) > 0 {
		return e.parse[i]
	}
	return e.svc[i]
}

// str is get as a string.
func (e *envelopeHeaders) str(i int) string { return string(e.get(i)) }
