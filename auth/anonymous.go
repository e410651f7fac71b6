package auth

import (
	"context"
	"regexp"

	"github.com/quarrydata/quarry/schema"
)

// anonymousID is the form of authData.anonymous.id: a lowercase UUID, as
// the SDKs generate it.
var anonymousID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// anonymousAdapter accepts any well-formed id: an anonymous user is whoever
// holds the id their device made up. anyID takes any non-empty string
// (Parse Server 9's rule).
type anonymousAdapter struct{ anyID bool }

func (anonymousAdapter) ValidateOptions(Options) error { return nil }

func (a anonymousAdapter) ValidateAuthData(_ context.Context, data map[string]any, _ Options) (Result, error) {
	if a.anyID {
		if str(data, "id") == "" {
			return Result{}, schema.Errorf(CodeInvalidLinkedSession, "authData.anonymous.id is missing.")
		}
	} else if !anonymousID.MatchString(str(data, "id")) {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "authData.anonymous.id is not a valid lowercase UUID.")
	}
	return Result{Store: map[string]any{"id": data["id"]}}, nil
}

func (anonymousAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}
