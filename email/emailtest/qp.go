package emailtest

import (
	"io"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// quotedPrintable decodes the body when its transfer encoding says so.
func quotedPrintable(msg *mail.Message) io.Reader {
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		return quotedprintable.NewReader(msg.Body)
	}
	return msg.Body
}
