//go:build !linux

package main

func batchHeap(n int) {}
