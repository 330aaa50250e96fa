from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, LazyLinear
from .flatten import Flatten, Unflatten
from .activation import (ReLU, ReLU6, LeakyReLU, PReLU, ELU, SELU, CELU, GELU, SiLU, Mish,
                         Sigmoid, Tanh, Softplus, Softsign, Hardtanh, Hardsigmoid, Hardswish,
                         Softmax, LogSoftmax, Softmin, Threshold, LogSigmoid, Tanhshrink, GLU,
                         Softmax2d, Hardshrink, Softshrink, RReLU, MultiheadAttention)
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d,
                        LazyBatchNorm3d, SyncBatchNorm)
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,
                           LazyInstanceNorm2d, LazyInstanceNorm3d)
from .normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d
from .dropout import (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
                      FeatureAlphaDropout)
from .sparse import Embedding, EmbeddingBag
from .distance import PairwiseDistance, CosineSimilarity
from .loss import (L1Loss, MSELoss, SmoothL1Loss, HuberLoss, NLLLoss, CrossEntropyLoss, BCELoss,
                   BCEWithLogitsLoss, KLDivLoss, CosineEmbeddingLoss, MarginRankingLoss,
                   HingeEmbeddingLoss, SoftMarginLoss, PoissonNLLLoss, GaussianNLLLoss,
                   MultiMarginLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss, NLLLoss2d, CTCLoss,
                   LinearCrossEntropyLoss)
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .channelshuffle import ChannelShuffle
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
                      LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d, FractionalMaxPool3d)
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d,
                      ZeroPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                      CircularPad2d, CircularPad3d)
from .fold import Fold, Unfold
from .rnn import RNNBase, RNN, GRU, LSTM, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
                          TransformerDecoder, Transformer)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from ..parameter import UninitializedParameter, UninitializedBuffer
