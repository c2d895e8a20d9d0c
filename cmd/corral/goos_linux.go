package main

const isLinux = true
