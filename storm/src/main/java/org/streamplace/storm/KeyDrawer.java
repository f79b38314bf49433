package org.streamplace.storm;

import java.io.Serializable;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Draws the key of a fields stream: uniform over {@code numKeys} keys, or Zipf with exponent s
 * (key k, 0-based, has weight 1/(k+1)^s) by inverting a precomputed CDF. Keys are ints 0..n-1;
 * Storm routes an int key k to target index {@code floorMod(31 + k, targets)}
 * ({@code Arrays.deepHashCode} of the one-field key list).
 */
public final class KeyDrawer implements Serializable {
    private static final long serialVersionUID = 1L;
    private final int numKeys;
    private final double[] cdf;   // null = uniform

    public KeyDrawer(Spec.Stream stream) {
        numKeys = stream.numKeys();
        if (stream.keyDistribution().equals("zipf")) {
            cdf = new double[numKeys];
            double sum = 0;
            for (int k = 0; k < numKeys; k++) {
                sum += Math.pow(k + 1, -stream.zipfS());
                cdf[k] = sum;
            }
            for (int k = 0; k < numKeys; k++) {
                cdf[k] /= sum;
            }
        } else {
            cdf = null;
        }
    }

    public int draw(SplittableRandom rng) {
        if (cdf == null) {
            return rng.nextInt(numKeys);
        }
        int i = Arrays.binarySearch(cdf, rng.nextDouble());
        return Math.min(i >= 0 ? i : -i - 1, numKeys - 1);
    }
}
