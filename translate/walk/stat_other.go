//go:build !(linux && (amd64 || arm64))

package walk

// statJoined handles nothing here: the .htaccess probe calls os.Stat.
func statJoined(dir, name string) (f fileFacts, handled bool, err error) {
	return fileFacts{}, false, nil
}
