"""Tree review: score, verify, diff and the tree reports. They read built trees and never build them."""
