package server

import (
	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/service"
)

// liveTriggers runs cloud code's LiveQuery triggers for the LiveQuery
// server (live.Triggers): live and cloud never import each other.
type liveTriggers struct {
	reg *cloud.Registry
	svc *service.Service
}

// newLiveTriggers is nil when cloud code defines no LiveQuery trigger, so
// that LiveQuery does no trigger work at all.
func newLiveTriggers(reg *cloud.Registry, svc *service.Service) live.Triggers {
	for _, k := range []service.TriggerKind{service.BeforeConnect, service.BeforeSubscribe, service.AfterLiveQueryEvent} {
		if reg.HasKind(k) {
			return liveTriggers{reg: reg, svc: svc}
		}
	}
	return nil
}

// auth is the subscriber as cloud code sees it (request.user).
func (t liveTriggers) auth(token, installationID, ip string, master bool) service.Auth {
	a := service.Auth{Master: master, SessionToken: token, InstallationID: installationID, Request: &service.RequestInfo{IP: ip}}
	if token != "" && !master {
		if known, err := t.svc.Authenticate(a); err == nil {
			a = known
		}
	}
	return a
}

func (t liveTriggers) BeforeConnect(req *live.ConnectRequest) error {
	if !t.reg.Has(service.BeforeConnect, service.ConnectClass) {
		return nil
	}
	return t.reg.Trigger(&service.TriggerRequest{Kind: service.BeforeConnect, Class: service.ConnectClass,
		Auth: t.auth(req.SessionToken, req.InstallationID, req.IP, req.Master),
		Object: map[string]any{"installationId": req.InstallationID, "clients": float64(req.Clients),
			"subscriptions": float64(req.Subscriptions), "useMasterKey": req.Master}})
}

func (t liveTriggers) BeforeSubscribe(req *live.SubscribeRequest) error {
	if !t.reg.Has(service.BeforeSubscribe, req.Class) {
		return nil
	}
	p := &service.FindParams{Where: req.Where, Limit: -1, Read: service.ReadOptions{Keys: req.Keys}}
	err := t.reg.Find(&service.FindRequest{Kind: service.BeforeSubscribe, Class: req.Class,
		Auth: t.auth(req.SessionToken, "", req.IP, req.Master), Params: p})
	if err != nil {
		return err
	}
	req.Where, req.Keys = p.Where, p.Read.Keys
	return nil
}

func (t liveTriggers) HasAfterEvent(class string) bool {
	return t.reg.Has(service.AfterLiveQueryEvent, class)
}

func (t liveTriggers) AfterEvent(req *live.EventRequest) error {
	tr := &service.TriggerRequest{Kind: service.AfterLiveQueryEvent, Class: req.Class, Object: req.Object, Original: req.Original,
		Event: req.Event, Auth: t.auth(req.SessionToken, "", "", req.Master)}
	if err := t.reg.Trigger(tr); err != nil {
		return err
	}
	req.Object, req.Suppress = tr.Object, tr.Suppress
	return nil
}
