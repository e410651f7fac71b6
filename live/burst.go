package live

import (
	"encoding/binary"
	"net"
	"time"
)

// maxBurstBytes bounds the frames one socket write carries: a client with
// several events queued (a batch's creates, many subscriptions matching
// one change) gets them in one write(2) instead of one each.
const maxBurstBytes = 64 << 10

// appendTextFrame appends msg as one final, unmasked WebSocket text frame
// (RFC 6455 §5.2: a server never masks).
func appendTextFrame(buf, msg []byte) []byte {
	const finText = 0x81
	switch n := len(msg); {
	case n < 126:
		buf = append(buf, finText, byte(n))
	case n <= 0xFFFF:
		buf = append(buf, finText, 126)
		buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	default:
		buf = append(buf, finText, 127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	return append(buf, msg...)
}

// gatherBurst frames first and the messages queued behind it, up to
// maxBurstBytes, into buf. closing reports that it met the
// closeAfterFlush mark (a nil message), which ends the burst.
func gatherBurst(buf, first []byte, queue <-chan []byte) (out []byte, closing bool) {
	buf = appendTextFrame(buf, first)
	for len(buf) < maxBurstBytes {
		select {
		case msg := <-queue:
			if msg == nil {
				return buf, true
			}
			buf = appendTextFrame(buf, msg)
		default:
			return buf, false
		}
	}
	return buf, false
}

// writeBurst writes framed messages to the socket in one call. It goes
// around the websocket.Conn, whose writer sends one frame per write: only
// the writer goroutine writes data frames, and a control frame written
// meanwhile (a pong, a close) is one Write of its own, which the socket
// never interleaves with this one.
func writeBurst(nc net.Conn, frames []byte, deadline time.Time) error {
	if err := nc.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err := nc.Write(frames)
	return err
}
