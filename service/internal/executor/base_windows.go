package executor

// platformBase names the variables of the service's environment a run
// needs to start at all on this platform.
var platformBase = []string{"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES"}
