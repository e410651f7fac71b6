package transport

import (
	"github.com/valyala/fasthttp"
)

// signUpWithAuthData answers POST /users with authData: 201 and the new
// user's id, token (and made-up username), or 200 and the whole user when
// the authData logged an existing user in.
func signUpWithAuthData(s *Server, c *call) (any, error) {
	r, err := s.accounts.SignUpWithAuthData(c.auth, c.body)
	if err != nil {
		return nil, err
	}
	if !r.Created {
		return r.User, nil
	}
	c.status = fasthttp.StatusCreated
	c.location = c.base + "/users/" + r.Create.ObjectID
	out := map[string]any{"objectId": r.Create.ObjectID, "createdAt": r.Create.CreatedAt, "sessionToken": r.SessionToken}
	if r.Username != "" {
		out["username"] = r.Username
	}
	if r.Response != nil {
		out["authDataResponse"] = r.Response
	}
	for k, v := range r.Create.Echo {
		if _, set := out[k]; !set {
			out[k] = v
		}
	}
	return out, nil
}

// challenge answers POST /challenge (multi-factor challenges).
func challenge(s *Server, c *call) (any, error) {
	return s.accounts.Challenge(c.auth, c.body)
}
