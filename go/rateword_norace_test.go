//go:build !race

package weir

const raceBuild = false
