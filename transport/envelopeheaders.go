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
	hdrMaintenanceKey
	numEnvelopeHeaders
)

var envelopeHeaderNames = [numEnvelopeHeaders][]byte{
	[]byte("Application-Id"), []byte("Master-Key"), []byte("Client-Key"), []byte("Javascript-Key"),
	[]byte("REST-API-Key"), []byte("Windows-Key"), []byte("Session-Token"), []byte("Installation-Id"),
	[]byte("Cloud-Context"), []byte("Maintenance-Key"),
}

var (
	prefixParse         = []byte("X-Parse-")
	prefixSvc           = []byte("X-Svc-")
	headerOrigin        = []byte("Origin")
	headerRequestID     = []byte("X-Request-Id")
	headerAuthorization = []byte("Authorization")
	headerUpgrade       = []byte("Upgrade")
	// headerReadAfterWrites asks a query to wait until this instance has
	// applied every commit made before the request arrived (service.
	// FindParams.ReadAfterWrites); any value but "0" or "false" does.
	headerReadAfterWrites = []byte("X-Quarry-Read-After-Writes")
)

// requestHeaders are the request headers the server reads on every
// request (the credentials, Origin for CORS, X-Request-Id for the log
// line, Authorization for basic auth, Upgrade for WebSocket), collected in one pass over the
// request's headers instead of a lookup (two for a credential: X-Parse-,
// then X-Svc-) per name. Like Peek, the first header of a name counts.
// Values stay valid while the request is served.
type requestHeaders struct {
	parse, svc         [numEnvelopeHeaders][]byte
	seenParse, seenSvc uint16 // which names were met, so the first one counts
	origin             []byte
	requestID          []byte
	authorization      []byte
	upgrade            []byte
	readAfterWrites    []byte
	seenOther          uint8 // bits: origin, request id, authorization, upgrade, read after writes
}

// readRequestHeaders collects h's headers the server reads.
func readRequestHeaders(h *fasthttp.RequestHeader) (e requestHeaders) {
	h.VisitAll(func(k, v []byte) { e.add(k, v) })
	return e
}

func (e *requestHeaders) add(k, v []byte) {
	if len(k) == 0 {
		return
	}
	switch k[0] | 0x20 {
	case 'x':
	case 'o':
		e.other(0, &e.origin, k, headerOrigin, v)
		return
	case 'a':
		e.other(2, &e.authorization, k, headerAuthorization, v)
		return
	case 'u':
		e.other(3, &e.upgrade, k, headerUpgrade, v)
		return
	default:
		return
	}
	vals, seen := &e.parse, &e.seenParse
	switch {
	case len(k) > len(prefixParse) && bytes.EqualFold(k[:len(prefixParse)], prefixParse):
		k = k[len(prefixParse):]
	case len(k) > len(prefixSvc) && bytes.EqualFold(k[:len(prefixSvc)], prefixSvc):
		k, vals, seen = k[len(prefixSvc):], &e.svc, &e.seenSvc
	default:
		e.other(1, &e.requestID, k, headerRequestID, v)
		e.other(4, &e.readAfterWrites, k, headerReadAfterWrites, v)
		return
	}
	for i, name := range envelopeHeaderNames {
		if *seen&(1<<i) == 0 && bytes.EqualFold(k, name) {
			*seen |= 1 << i
			vals[i] = v
			return
		}
	}
}

// other keeps v in *into when k is name and it is the first of that name
// (bit).
func (e *requestHeaders) other(bit uint, into *[]byte, k, name, v []byte) {
	if e.seenOther&(1<<bit) == 0 && bytes.EqualFold(k, name) {
		e.seenOther |= 1 << bit
		*into = v
	}
}

// get is header's answer for name i: X-Parse-<name> when it is not
// empty, else X-Svc-<name>.
func (e *requestHeaders) get(i int) []byte {
	if len(e.parse[i]) > 0 {
		return e.parse[i]
	}
	return e.svc[i]
}

// wantsReadAfterWrites reports whether X-Quarry-Read-After-Writes asks
// for it.
func (e *requestHeaders) wantsReadAfterWrites() bool {
	v := e.readAfterWrites
	return len(v) > 0 && !bytes.Equal(v, []byte("0")) && !bytes.EqualFold(v, []byte("false"))
}

// str is get as a string.
func (e *requestHeaders) str(i int) string { return string(e.get(i)) }
