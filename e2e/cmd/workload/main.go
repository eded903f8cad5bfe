// Command workload is the container the kind e2e suites run in pods: a static binary in a
// FROM-scratch image, so that no image has to be pulled. Each subcommand is one thing a
// test wants a pod to do and prints what it did, for the test to read from the pod's log.
//
//	workload sleep 2s          sleep, then exit 0
//	workload exit 3            exit with the given code
//	workload get https://x/y   GET the URL (TLS unverified) and print the status line
//	workload env NAME...       print NAME=value for each variable
package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: workload sleep DURATION | exit CODE | get URL | env NAME…")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "sleep":
		if len(rest) != 1 {
			return fmt.Errorf("sleep takes one duration")
		}
		d, err := time.ParseDuration(rest[0])
		if err != nil {
			return err
		}
		time.Sleep(d)
		fmt.Println("slept", d)
		return nil
	case "exit":
		if len(rest) != 1 {
			return fmt.Errorf("exit takes one code")
		}
		code, err := strconv.Atoi(rest[0])
		if err != nil {
			return err
		}
		fmt.Println("exiting with", code)
		os.Exit(code)
		return nil
	case "get":
		if len(rest) != 1 {
			return fmt.Errorf("get takes one URL")
		}
		return get(rest[0])
	case "env":
		for _, name := range rest {
			fmt.Printf("%s=%s\n", name, os.Getenv(name))
		}
		return nil
	default:
		return fmt.Errorf("unknown subcommand %q", cmd)
	}
}

// get reaches a server (another cluster's API server, say) whose CA the pod does not hold:
// the test is about the network path, not about trust.
func get(url string) error {
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // reachability only
	}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	fmt.Printf("GET %s: %s\n%s\n", url, resp.Status, body)
	return nil
}
