// groupcache_owners prints the peer that Go's groupcache consistenthash
// package (Debian's golang-github-golang-groupcache-dev, built in GOPATH
// mode) gives to each key, so tests/compat/ownring.py can compare chash's
// algorithm groupcache with the real package.
//
//	groupcache_owners REPLICAS NODE... < keys > owners
//
// The nodes are added with one Add call in argument order, as groupcache's
// HTTPPool.Set does with its peer list. Keys come one a line in hex (so any
// byte can be a key); each answer is the owner's name on a line of its own.
// With REPLICAS 0 it prints crc32.ChecksumIEEE of each key instead, to
// check chash's crc32a hash against Go's.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"

	"github.com/golang/groupcache/consistenthash"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: groupcache_owners REPLICAS NODE... < hex keys")
		os.Exit(2)
	}
	replicas, err := strconv.Atoi(os.Args[1])
	if err != nil || replicas < 0 {
		fmt.Fprintln(os.Stderr, "groupcache_owners: bad REPLICAS", os.Args[1])
		os.Exit(2)
	}
	ring := consistenthash.New(replicas, nil)
	ring.Add(os.Args[2:]...)

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		key, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, "groupcache_owners: key is not hex:", in.Text())
			os.Exit(2)
		}
		if replicas == 0 {
			fmt.Fprintln(out, crc32.ChecksumIEEE(key))
		} else {
			fmt.Fprintln(out, ring.Get(string(key)))
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "groupcache_owners:", err)
		os.Exit(2)
	}
}
