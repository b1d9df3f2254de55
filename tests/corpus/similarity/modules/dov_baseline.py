import numpy as np
from sklearn.linear_model import LogisticRegression


def bag_of_counts(tokens):
    tokens = np.asarray(tokens)
    return np.stack([(tokens == digit).sum(axis=1) for digit in range(1, 10)], axis=1).astype(np.float64)


def fit_baseline(train_tokens, train_labels, val_tokens, val_labels):
    classifier = LogisticRegression(max_iter=2000)
    classifier.fit(bag_of_counts(train_tokens), train_labels)
    return classifier.score(bag_of_counts(val_tokens), val_labels)
