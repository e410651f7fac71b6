package service

// LockClass holds a class as a purge does, for tests.
func LockClass(s *Service, class string) (unlock func()) { return s.lockClass(class) }
