package weir

import "fmt"

// statusRateLimitInvalid is WEIR_ERR_RATE_LIMIT_INVALID.
const statusRateLimitInvalid = 404

// statusGcraLimitInvalid is WEIR_ERR_GCRA_LIMIT_INVALID.
const statusGcraLimitInvalid = 434

// wordStatus is a weir_status from the words' constructors (provisional:
// replaced by the package's status errors when they land).
type wordStatus int32

func (s wordStatus) Error() string { return fmt.Sprintf("weir: status %d", int32(s)) }

func statusError(code int32) error { return wordStatus(code) }
