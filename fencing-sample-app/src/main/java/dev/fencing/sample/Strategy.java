package dev.fencing.sample;

/**
 * One way of guarding the resource, put through the canonical race: client 1 takes the lock, pauses until the lock
 * service really hands the lock to client 2, client 2 writes X, client 1 wakes and writes Y; then the data is read.
 */
interface Strategy {

    String name();

    Row run(SampleDatabase db, Options options, Progress progress) throws Throwable;
}
