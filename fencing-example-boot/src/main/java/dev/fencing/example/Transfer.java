package dev.fencing.example;

/** A completed transfer and the balances it left. */
public record Transfer(long from, long to, long amount, long fromBalance, long toBalance) {
}
