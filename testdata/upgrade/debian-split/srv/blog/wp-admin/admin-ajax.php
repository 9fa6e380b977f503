<?php /* ajax */
