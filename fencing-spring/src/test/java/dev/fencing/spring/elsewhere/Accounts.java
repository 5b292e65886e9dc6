package dev.fencing.spring.elsewhere;

import dev.fencing.annotation.Fenced;

/**
 * A repository declared by its interface, with implementations in a package no startup scan of
 * {@code dev.fencing.spring.lazy} reads, for LazyBeanCreatedLaterTest.
 */
public interface Accounts {

    void deposit(long id, long amount);

    /** Its key names a parameter that does not exist (a typo). */
    class Misspelt implements Accounts {
        @Override
        @Fenced(resource = "accounts", key = "#acountId")
        public void deposit(long id, long amount) {
        }
    }

    /** A correct fence. */
    class Correct implements Accounts {
        @Override
        @Fenced(resource = "accounts", key = "#id")
        public void deposit(long id, long amount) {
        }
    }
}
