package dev.fencing.it.boot.signing;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The application the signed-token proofs run, with the starter and {@code fencing.*} properties only: a ledger whose
 * deposits are fenced per account ({@code accounts:ID}), reached over HTTP with the caller's {@code Fencing-Token}
 * ({@code /internal/**}) or under a lock it takes itself ({@code /accounts/**}, unless {@code proof.acquiring=false}
 * for a resource that only checks). The tables come from the proof tests' Flyway migrations.
 */
@SpringBootApplication
public class SigningProofApplication {
}
