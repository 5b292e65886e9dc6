package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keyed methods of seven parameters and more, whose advice binds the first six and the last six arguments (past
 * twelve, AspectJ's join point gives them): the key at positions each group reads, every primitive type, nulls, and
 * results of each kind. Each body returns its arguments in order, so one passed on at the wrong place shows.
 */
public class WovenWide {

    public final List<String> writes = new CopyOnWriteArrayList<>();

    /** Eight parameters, the key the seventh: read from the last six, where it is the fifth. */
    @Fenced(resource = "woven-wide", key = "#id")
    public String seventhOfEight(String a, long b, double c, boolean d, char e, short f, long id, byte g) {
        return wrote(a, b, c, d, e, f, id, g);
    }

    /** Nine parameters, the key the eighth. */
    @Fenced(resource = "woven-wide", key = "#id")
    public String eighthOfNine(int a, String b, long c, float d, Object e, char f, double g, String id, boolean h) {
        return wrote(a, b, c, d, e, f, g, id, h);
    }

    /** Ten parameters, the key the ninth: the last group's fifth again, from another count. */
    @Fenced(resource = "woven-wide", key = "#id")
    public String ninthOfTen(String a, String b, String c, String d, String e, String f, String g, String h, long id,
            String i) {
        return wrote(a, b, c, d, e, f, g, h, id, i);
    }

    /** Eleven parameters, the key the seventh: the first of the last six. */
    @Fenced(resource = "woven-wide", key = "#id")
    public String seventhOfEleven(byte a, short b, int c, long d, float e, double f, long id, char g, boolean h,
            String i, Object j) {
        return wrote(a, b, c, d, e, f, id, g, h, i, j);
    }

    /** Twelve parameters, the key the eighth; SpEL over the second and the eleventh. */
    @Fenced(resource = "woven-wide", key = "#b + '-' + #k")
    public String overSecondAndEleventhOfTwelve(String a, String b, String c, String d, String e, String f, String g,
            String h, String i, String j, String k, String l) {
        return wrote(a, b, c, d, e, f, g, h, i, j, k, l);
    }

    /** Seven parameters, a body that throws what it is given. */
    @Fenced(resource = "woven-wide", key = "#id")
    public void failingOfSeven(long id, int a, int b, int c, int d, int e, RuntimeException failure) {
        writes.add("failingOfSeven " + id);
        throw failure;
    }

    /** Thirteen parameters, a {@code long} result: through the join point, boxed by its advice. */
    @Fenced(resource = "woven-wide", key = "#id")
    public long firstOfThirteen(long id, long a, long b, long c, long d, long e, long f, long g, long h, long i, long j,
            long k, long l) {
        writes.add("firstOfThirteen " + id);
        return id * 1_000_000_000_000L + a + b + c + d + e + f + g + h + i + j + k + l;
    }

    /** Thirteen parameters, no result. */
    @Fenced(resource = "woven-wide", key = "#id")
    public void lastOfThirteen(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, int k, int l,
            long id) {
        writes.add("lastOfThirteen " + id + " " + (a + b + c + d + e + f + g + h + i + j + k + l));
    }

    private String wrote(Object... args) {
        String text = Arrays.toString(args);
        writes.add(text);
        return text;
    }
}
