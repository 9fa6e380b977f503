package proxy

import (
	"context"
	"net/http"
)

func contextWith(r *http.Request, info *passInfo) context.Context {
	return context.WithValue(r.Context(), ctxKey{}, info)
}
