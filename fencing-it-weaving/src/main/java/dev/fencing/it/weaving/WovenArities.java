package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keyed methods of every parameter count the woven aspect tells apart (one to six parameters bound one by one;
 * seven to twelve with the first six and the last six bound, a primitive result unboxed up to there; more than twelve
 * through the join point; none with no argument at all), with the key at each position, read as a getter chain or by
 * SpEL over two arguments, and each return type with an advice of its own. Each body returns what it was given, so a
 * bound argument passed on wrongly shows.
 */
public class WovenArities {

    public final List<String> writes = new CopyOnWriteArrayList<>();

    /** What {@link #pathOfTwo} keys on. */
    public record Order(String id) {
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public String one(long id) {
        writes.add("one " + id);
        return "one " + id;
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public float secondOfTwo(int factor, long id) {
        writes.add("secondOfTwo " + id);
        return factor * 1.5f;
    }

    @Fenced(resource = "woven-arity", key = "#name")
    public String nameOfTwo(String note, String name) {
        writes.add("nameOfTwo " + name);
        return note + " " + name;
    }

    @Fenced(resource = "woven-arity", key = "#order.id")
    public String pathOfTwo(String note, Order order) {
        writes.add("pathOfTwo " + order.id());
        return note + " " + order.id();
    }

    @Fenced(resource = "woven-arity", key = "#left + '-' + #right")
    public void spelOverTwo(String left, String right) {
        writes.add("spelOverTwo " + left + "-" + right);
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public int firstOfThree(long id, String note, double amount) {
        writes.add("firstOfThree " + id);
        return note.length() + (int) amount;
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public long secondOfThree(String note, long id, float amount) {
        writes.add("secondOfThree " + id);
        return note.length() + id + (long) amount;
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public double thirdOfThree(String note, float amount, long id) {
        writes.add("thirdOfThree " + id);
        return note.length() + amount + id;
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public String fourthOfFour(String a, String b, String c, long id) {
        writes.add("fourthOfFour " + id);
        return a + b + c + id;
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public String firstOfFive(long id, String a, String b, String c, String d) {
        writes.add("firstOfFive " + id);
        return a + b + c + d + id;
    }

    @Fenced(resource = "woven-arity", key = "#left + '-' + #right")
    public void spelOverFive(String left, int a, int b, int c, String right) {
        writes.add("spelOverFive " + left + "-" + right + " " + (a + b + c));
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public Long sixthOfSix(int a, int b, int c, int d, int e, long id) {
        writes.add("sixthOfSix " + id);
        return a + b + c + d + e + id;
    }

    /** Four parameters and a primitive result: bound, the primitive arguments boxed, the result not. */
    @Fenced(resource = "woven-arity", key = "#id")
    public int intOfFour(long id, int a, int b, int c) {
        writes.add("intOfFour " + id);
        return a + b + c;
    }

    /** Four parameters, none primitive, and a long result past the box cache: its own advice, nothing boxed. */
    @Fenced(resource = "woven-arity", key = "#id")
    public long longOfFour(String a, String b, String c, String id) {
        writes.add("longOfFour " + id);
        return 40_000_000_000L + a.length() + b.length() + c.length();
    }

    /** Five parameters, the key the first, a float result (Float has no box cache). */
    @Fenced(resource = "woven-arity", key = "#id")
    public float floatOfFive(String id, String a, String b, String c, String d) {
        writes.add("floatOfFive " + id);
        return 0.5f + a.length() + b.length() + c.length() + d.length();
    }

    /** Six parameters, a double result (Double has no box cache). */
    @Fenced(resource = "woven-arity", key = "#id")
    public double doubleOfSix(String a, String b, String c, String id, String d, String e) {
        writes.add("doubleOfSix " + id);
        return 0.25 + a.length() + b.length() + c.length() + d.length() + e.length();
    }

    /** Nine parameters, the key the eighth, an int result past the box cache. */
    @Fenced(resource = "woven-arity", key = "#id")
    public int intOfNine(String a, String b, String c, String d, String e, String f, String g, String id, String h) {
        writes.add("intOfNine " + id);
        return 1_000_000 + a.length() + b.length() + c.length() + d.length() + e.length() + f.length() + g.length()
                + h.length();
    }

    /** Twelve parameters, the key the first, a float result. */
    @Fenced(resource = "woven-arity", key = "#id")
    public float floatOfTwelve(String id, String a, String b, String c, String d, String e, String f, String g,
            String h, String i, String j, String k) {
        writes.add("floatOfTwelve " + id);
        return 0.75f + a.length() + b.length() + c.length() + d.length() + e.length() + f.length() + g.length()
                + h.length() + i.length() + j.length() + k.length();
    }

    /** Ten parameters, the key the last, a double result. */
    @Fenced(resource = "woven-arity", key = "#id")
    public double doubleOfTen(String a, String b, String c, String d, String e, String f, String g, String h,
            String i, String id) {
        writes.add("doubleOfTen " + id);
        return 0.125 + a.length() + b.length() + c.length() + d.length() + e.length() + f.length() + g.length()
                + h.length() + i.length();
    }

    /** Seven parameters, the key the last: bound among the last six. */
    @Fenced(resource = "woven-arity", key = "#id")
    public String seventhOfSeven(String a, String b, String c, String d, String e, String f, long id) {
        writes.add("seventhOfSeven " + id);
        return a + b + c + d + e + f + id;
    }

    /** Eight parameters, the key the first: bound with the first six, the last two passed on. */
    @Fenced(resource = "woven-arity", key = "#id")
    public long firstOfEight(long id, String a, String b, String c, String d, String e, int f, long extra) {
        writes.add("firstOfEight " + id);
        return id + a.length() + b.length() + c.length() + d.length() + e.length() + f + extra;
    }

    /** Seven parameters, the key the sixth: the last one bound. */
    @Fenced(resource = "woven-arity", key = "#id")
    public double sixthOfSeven(String a, String b, String c, String d, float e, long id, double half) {
        writes.add("sixthOfSeven " + id);
        return a.length() + b.length() + c.length() + d.length() + e + id + half;
    }

    /** Seven parameters, SpEL over the first and the last: the key gets the call's arguments as one array. */
    @Fenced(resource = "woven-arity", key = "#left + '-' + #right")
    public void spelOverSeven(String left, int a, int b, int c, int d, int e, String right) {
        writes.add("spelOverSeven " + left + "-" + right + " " + (a + b + c + d + e));
    }

    /** The stack a seven-parameter body keyed on its first argument runs on: the bracket's, in this frame. */
    @Fenced(resource = "woven-arity", key = "#id")
    public StackTraceElement[] stackOfFirstOfSeven(long id, int a, int b, int c, int d, int e, int f) {
        writes.add("stackOfFirstOfSeven " + id);
        return new Throwable().getStackTrace();
    }

    /** The stack a seven-parameter body keyed on its last argument runs on: the bracket's too. */
    @Fenced(resource = "woven-arity", key = "#id")
    public StackTraceElement[] stackOfSeventhOfSeven(int a, int b, int c, int d, int e, int f, long id) {
        writes.add("stackOfSeventhOfSeven " + id);
        return new Throwable().getStackTrace();
    }

    /** Twelve parameters, the key the last: the most the advice binds without a join point. */
    @Fenced(resource = "woven-arity", key = "#id")
    public long twelfthOfTwelve(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, int k, long id) {
        writes.add("twelfthOfTwelve " + id);
        return a + b + c + d + e + f + g + h + i + j + k + id;
    }

    /** Thirteen parameters: through the join point. */
    @Fenced(resource = "woven-arity", key = "#id")
    public String thirteenthOfThirteen(String a, String b, String c, String d, String e, String f, String g, String h,
            String i, String j, String k, String l, long id) {
        writes.add("thirteenthOfThirteen " + id);
        return a + b + c + d + e + f + g + h + i + j + k + l + id;
    }

    @Fenced(resource = "woven-arity", key = "'all'")
    public int none() {
        writes.add("none");
        return writes.size();
    }
}
