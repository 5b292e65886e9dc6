package dev.fencing.it.reactive.app;

/** The balance after a deposit and the value of the token it was written with. */
public record Deposit(long balance, long token) {
}
